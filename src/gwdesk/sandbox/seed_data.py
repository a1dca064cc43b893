"""Vocabulary of the seeder: message templates, fill-ins, numbers and replies.

Kept apart from `seed.py` so the fast loop there reads as a loop. Everything here
is built once per seed from the seed's own random stream, into pools the loop
picks from with one random draw each: per-row template work (and GSM segment
counting) would cost more than the database insert itself.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Final

from gwdesk.domain.segments import MAX_PARTS, count_parts

NAMES: Final = (
    "Olivia", "Jack", "Charlotte", "Noah", "Amelia", "William", "Isla", "Oliver", "Mia",
    "Thomas", "Aroha", "Tane", "Wei", "Mei", "Priya", "Arjun", "Mohammed", "Fatima",
    "Siobhán", "Chloé", "José", "Zoë", "Björn", "Ngaio", "Hiroshi", "Yuki", "Lars",
    "Sofía", "Matteo", "Emily", "Lachlan", "Grace", "Ethan", "Ruby", "Lucas", "Hannah",
)  # fmt: skip
PLACES: Final = (
    "Bondi Dental", "Northside Physio", "City Vet Clinic", "Harbour Bistro", "Glebe Library",
    "Parramatta Service Centre", "Fitzroy Barbers", "Ponsonby Optometrists", "Camden Motors",
    "Riverside Medical", "Westfield Pickup Point", "Manly Surf School",
)  # fmt: skip
DAYS: Final = (
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "tomorrow", "today",
    "12 March", "3 June", "21 September", "30 November",
)  # fmt: skip
TIMES: Final = ("8:30am", "9:15am", "10:00am", "11:45am", "1:30pm", "2:00pm", "3:45pm", "5:10pm")
HOSTS: Final = ("web-01", "db-02", "api-gw", "mq-03", "edge-syd", "edge-akl")

SMS_TEMPLATES: Final = (
    "Hi {name}, your appointment at {place} is on {day} at {time}. Call {phone} to change it.",
    "{name}, your order #{order} has shipped and should arrive {day}. Track it: https://trk.example.com/{code}",
    "Your verification code is {code6}. It expires in 10 minutes. Never share it with anyone.",
    "Reminder: {place} is closed on {day}. Sorry for any inconvenience.",
    "Payment of ${amount} received, thank you {name}. Receipt {order}.",
    "ALERT: {host} CPU at {pct}% since {time}. Ack with the on-call app.",
    "{name}, your table for {count} at {place} is booked for {day} {time}.",
    "Your parcel is waiting at {place}. Bring ID and code {code6} before {day}.",
    "Special offer: {pct}% off everything {day} only! Show this SMS in store. Opt out: reply STOP",
    "Price update: {amount}€ per month from {day} [plan {code}]. Questions? {phone}",
    "Olá {name}, a sua encomenda #{order} está a caminho 🚚",
    "Happy birthday {name}! 🎉🎂 Enjoy {pct}% off at {place} today.",
    "您好{name}，您的验证码是{code6}，10分钟内有效。",
    "こんにちは{name}さん、{place}のご予約は{day} {time}です。",
    "Dzień dobry {name}, przypominamy o wizycie {day} o {time}. Zażółć gęślą jaźń!",
    "Γεια σας {name}, το ραντεβού σας είναι {day} στις {time}.",
)  # fmt: skip
LONG_SENTENCES: Final = (
    "Thank you for being a valued customer of {place} over the past year.",
    "From {day} our opening hours change to 8am to 6pm on weekdays and 9am to 1pm on Saturdays.",
    "Bookings can be made online, by phone on {phone}, or by replying to this message.",
    "Please arrive ten minutes early and bring your Medicare card and any referral letters.",
    "If you can no longer attend, let us know at least 24 hours ahead so we can offer the slot to someone else.",
    "Our car park is being resurfaced, so please use the street parking on the eastern side.",
    "This month every visit earns double points, and points never expire while your account is active.",
    "We have updated our privacy policy; the new version is at https://example.com/privacy.",
)  # fmt: skip
TWO_WAY_TEMPLATES: Final = (
    "Hi {name}, can you make your appointment at {place} on {day} at {time}? Reply YES or NO.",
    "{name}, please confirm delivery of order #{order} on {day}: reply Y to confirm, N to reschedule.",
    "How did we do at {place} today, {name}? Reply with a score from 1 to 5.",
    "Shift available {day} {time} at {place}. Reply ACCEPT to take it.",
)  # fmt: skip
REPLY_TEXTS: Final = (
    "YES", "Yes", "yes please", "NO", "No thanks", "Y", "N", "ACCEPT", "STOP", "5", "4",
    "Can we make it 3pm instead?", "Running 10 min late sorry", "👍", "Thanks!",
    "Who is this?", "Danke!", "好的", "Confirm", "Please call me",
)  # fmt: skip
#: WAP pushes as the Lodge service stores them: the application name is the
#: subject, the URL both the text and the link.
WAP_ITEMS: Final = (
    ("Tickets", "https://tickets.example.com/t/{code}"),
    ("Coupons", "https://offers.example.com/c/{code}"),
    ("AppUpdate", "https://apps.example.com/get/{code}"),
)
MMS_ITEMS: Final = (
    ("Your e-ticket", "Here is your ticket for {day}. Show it at the door.", "ticket.png", "image/png", 48_000),
    ("Photo from {place}", "Thanks for visiting, {name}!", "photo.jpg", "image/jpeg", 180_000),
    ("Voice note", "A message from {place}.", "note.amr", "audio/amr", 22_000),
    ("Product video", "See what's new this week.", "promo.3gp", "video/3gpp", 300_000),
)  # fmt: skip
FAX_ITEMS: Final = (
    ("Invoice {order}", "Please find attached invoice {order}. Regards, Accounts", "invoice.pdf", "application/pdf", 120_000),
    ("Referral for {name}", "Referral letter attached. Please call {phone} with any questions.", "referral.tiff", "image/tiff", 640_000),
    ("Purchase order {order}", "PO attached for your records.", "po.txt", "text/plain", 4_000),
)  # fmt: skip
SOURCES: Final = ("GWDesk", "Clinic", "Bistro", "61400111222", "61400333444", "Alerts")
COST_CENTRES: Final = ("Marketing", "Support", "Ops-Sydney", "Clinic-North", "Billing")
TAGS: Final = ("reminder", "marketing", "otp", "billing", "clinic", "vip", "alerts", "survey")
EXTERNAL_PREFIXES: Final = ("CRM", "ORD", "TCK", "APT")
WEBHOOK_PATHS: Final = (
    "https://hooks.example.com/sms?from=#FROM#&to=#TO#&msg=#MSG#&sent=#SENTDTS#",
    "https://crm.example.org/inbound?num=#FROM#&text=#MSG#",
)
#: Two-way reply types and their paths; HEADER is a sender name, not a reply route.
REPLY_ROUTES: Final = (
    ("HTTP", WEBHOOK_PATHS[0]),
    ("HTTPPOST", WEBHOOK_PATHS[1]),
    ("HTTPGET", WEBHOOK_PATHS[0]),
    ("EMAIL", "replies@example.com"),
    ("WWW", "https://portal.example.com/replies"),
    ("TCP/IP", "203.0.113.10:5000"),
)
HEADER_NAMES: Final = ("GWDesk", "ClinicSMS", "Bistro", "CityVet")


@dataclass(frozen=True, slots=True)
class Text:
    body: str
    parts: int


def random_number(rng: random.Random) -> str:
    """A plausible international number: mostly AU mobiles, some NZ, UK and US."""
    roll = rng.random()
    if roll < 0.72:
        return f"614{rng.randrange(10_000_000, 100_000_000)}"
    if roll < 0.82:
        return f"642{rng.choice('127')}{rng.randrange(1_000_000, 10_000_000)}"
    if roll < 0.91:
        return f"447{rng.randrange(100_000_000, 1_000_000_000)}"
    return f"1{rng.choice(('212', '415', '646', '310', '617', '206'))}{rng.randrange(2_000_000, 10_000_000)}"


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(NAMES),
        place=rng.choice(PLACES),
        day=rng.choice(DAYS),
        time=rng.choice(TIMES),
        phone=f"1300 {rng.randrange(100, 1000)} {rng.randrange(100, 1000)}",
        order=f"{rng.randrange(100_000, 1_000_000)}",
        code=f"{rng.getrandbits(32):08x}",
        code6=f"{rng.randrange(1_000_000):06d}",
        amount=f"{rng.randrange(5, 2_000)}.{rng.randrange(100):02d}",
        host=rng.choice(HOSTS),
        pct=rng.choice((10, 15, 20, 25, 30, 40, 50, 85, 92, 97)),
        count=rng.randrange(2, 9),
    )


def _long_text(rng: random.Random) -> str:
    sentences = rng.sample(LONG_SENTENCES, rng.randrange(3, len(LONG_SENTENCES) + 1))
    text = f"Dear {rng.choice(NAMES)}, " + " ".join(sentences)
    if rng.random() < 0.2:
        text += " Merci et à bientôt 😊"
    return _fill(text, rng)


def text_pool(
    rng: random.Random, size: int, templates: tuple[str, ...], long_share: float
) -> list[Text]:
    """Filled-in texts with their part counts, all within the gateway's length limit."""
    pool: list[Text] = []
    while len(pool) < size:
        long = rng.random() < long_share
        body = _long_text(rng) if long else _fill(rng.choice(templates), rng)
        parts = count_parts(body)
        if parts <= MAX_PARTS:
            pool.append(Text(body, parts))
    return pool


@dataclass(frozen=True, slots=True)
class Media:
    """What a WAP push, MMS or fax carries besides its recipient."""

    type: str
    text: str
    subject: str | None
    url: str | None
    attachments: str | None
    """JSON list of attachment descriptions, as the engine stores them."""


def _attachment(rng: random.Random, file_name: str, content_type: str, size: int) -> str:
    return json.dumps(
        [
            {
                "file_name": file_name,
                "content_type": content_type,
                "size": int(size * (0.5 + rng.random())),
                "sha256": f"{rng.getrandbits(256):064x}",
            }
        ]
    )


def media_pool(rng: random.Random, size: int, kind: str) -> list[Media]:
    """Filled-in WAP pushes (`WAP`), MMS (`MMS`) or faxes (`FAX`)."""
    pool: list[Media] = []
    for _ in range(size):
        if kind == "WAP":
            name, url = rng.choice(WAP_ITEMS)
            link = _fill(url, rng)
            pool.append(Media(kind, link, name, link, None))
            continue
        subject, text, file_name, content_type, weight = rng.choice(
            MMS_ITEMS if kind == "MMS" else FAX_ITEMS
        )
        pool.append(
            Media(
                kind,
                _fill(text, rng),
                _fill(subject, rng),
                None,
                _attachment(rng, file_name, content_type, weight),
            )
        )
    return pool
