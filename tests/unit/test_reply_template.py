"""The listener's ReplyPath template: what it hands out, and reading it (and its calls) back."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.replies.parse import WebhookClock, reply_from_params
from gwdesk.replies.template import DEFAULT_FIELDS, ReplyTemplate, TemplateError, public_address
from gwdesk.sandbox.webhooks import substitute

SECRET = "s3cr3t-Path_segment-0123456789ab"
SYDNEY = ZoneInfo("Australia/Sydney")
NOW = datetime(2024, 1, 5, 3, 4, 10, tzinfo=UTC)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789._~-", min_size=1, max_size=12)
field_orders = st.permutations(["FROM", "TO", "MSG", "SENTDTS", "RCVDDTS"])
#: Anything a customer can type, including the characters URLs and templates give meaning to.
texts = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from("&=#%+?/ ;:@$,\n")),
    max_size=60,
)
numbers = st.text(alphabet="+0123456789ABCDEFabcdef ", min_size=1, max_size=20).filter(
    lambda s: s.strip() != ""
)


@st.composite
def templates(draw: st.DrawFn) -> ReplyTemplate:
    order = draw(field_orders)
    chosen = draw(st.lists(names, min_size=5, max_size=5, unique=True))
    return ReplyTemplate(
        host=draw(st.sampled_from(["127.0.0.1", "localhost", "desk.example.org", "::1"])),
        port=draw(st.integers(1, 65535)),
        secret=draw(st.from_regex(r"[A-Za-z0-9_-]{16,40}", fullmatch=True)),
        fields=tuple(zip(chosen, order, strict=True)),
        scheme=draw(st.sampled_from(["http", "https"])),
    )


def test_the_generated_template_names_every_placeholder() -> None:
    template = ReplyTemplate.generate("127.0.0.1", 8642, SECRET)
    assert template.render() == (
        f"http://127.0.0.1:8642/replies/{SECRET}"
        "?from=#FROM#&to=#TO#&msg=#MSG#&sent=#SENTDTS#&rcvd=#RCVDDTS#"
    )
    assert template.base_url == f"http://127.0.0.1:8642/replies/{SECRET}"


def test_an_ipv6_host_is_bracketed() -> None:
    assert ReplyTemplate.generate("::1", 8642, SECRET).base_url.startswith("http://[::1]:8642/")


def test_the_schemes_own_port_is_left_out_of_the_address() -> None:
    assert ReplyTemplate.generate("::1", 80, SECRET).base_url.startswith("http://[::1]/replies/")


def test_the_secret_stays_out_of_the_repr() -> None:
    assert SECRET not in repr(ReplyTemplate.generate("127.0.0.1", 8642, SECRET))


@given(templates())
def test_a_rendered_template_reads_back_as_itself(template: ReplyTemplate) -> None:
    assert ReplyTemplate.parse(template.render()) == template


def test_operator_chosen_names_are_read_from_the_template() -> None:
    template = ReplyTemplate.parse(
        f"https://desk.example.org/replies/{SECRET}?who=#FROM#&line=#TO#&body=#MSG#&at=#RCVDDTS#"
    )
    assert template.fields == (("who", "FROM"), ("line", "TO"), ("body", "MSG"), ("at", "RCVDDTS"))
    assert template.port == 443


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (f"http://h:1/replies/{SECRET}?from=#FROM#&to=#TO#&msg=#MSG#", "#RCVDDTS#"),
        (f"http://h:1/replies/{SECRET}?a=#FROM#&a=#TO#&msg=#MSG#&r=#RCVDDTS#", "named twice"),
        (f"http://h:1/replies/{SECRET}?a=#FROM#&b=#FROM#&to=#TO#&m=#MSG#&r=#RCVDDTS#", "twice"),
        (f"http://h:1/replies/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#&x=#NAME#", "#NAME#"),
        (f"http://h:1/replies/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#&x=1", "x=1"),
        (f"http://h:1/other/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#", "/replies/"),
        ("http://h:1/replies/short?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#", "16 to 128"),
        (f"ftp://h:1/replies/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#", "http"),
        (f"http://u:p@h:1/replies/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#", "user name"),
        (f"http://h:99999/replies/{SECRET}?f=#FROM#&t=#TO#&m=#MSG#&r=#RCVDDTS#", "address"),
    ],
)
def test_a_template_the_listener_cannot_serve_is_refused_with_the_reason(
    text: str, complaint: str
) -> None:
    with pytest.raises(TemplateError, match=complaint.replace("?", r"\?").replace("#", r"\#")):
        ReplyTemplate.parse(text)


def test_fill_encodes_values_the_way_the_gateway_does() -> None:
    template = ReplyTemplate.generate("127.0.0.1", 8642, SECRET)
    values = {"FROM": "+614", "TO": "6140", "MSG": "a b&c=d#e", "SENTDTS": "x", "RCVDDTS": "y y"}
    assert template.fill(values) == substitute(template.render(), values)


@given(
    templates(),
    numbers,
    numbers,
    texts,
    st.datetimes(datetime(1900, 1, 1), datetime(2100, 1, 1), timezones=st.just(UTC)),
)
def test_whatever_the_gateway_fills_in_reads_back_unchanged(
    template: ReplyTemplate, sender: str, to: str, text: str, moment: datetime
) -> None:
    """The sandbox's own substitution (an implementation the listener shares no code with)."""
    stamp = moment.astimezone(SYDNEY)
    wall = f"{stamp:%d}-{MONTHS[stamp.month - 1]}-{stamp:%Y %H:%M:%S}"
    values = {"FROM": sender, "TO": to, "MSG": text, "SENTDTS": wall, "RCVDDTS": wall}
    url = substitute(template.render(), values)
    reply = reply_from_params(urlsplit(url).query, template, WebhookClock(SYDNEY), now=moment)
    assert (reply.from_number, reply.to_number, reply.text) == (sender.strip(), to.strip(), text)
    assert reply.received_at == moment.replace(microsecond=0)
    assert reply.sent_at == reply.received_at


@given(numbers, texts)
def test_a_form_post_body_reads_back_unchanged(sender: str, text: str) -> None:
    """HTTPPOST: the filled template's query, split off, is the form body."""
    template = ReplyTemplate.generate("127.0.0.1", 8642, SECRET, DEFAULT_FIELDS)
    values = {"FROM": sender, "TO": "61400000000", "MSG": text}
    values |= {"SENTDTS": "05-Jan-2024 14:04:05", "RCVDDTS": "05-Jan-2024 14:04:06"}
    _, _, body = substitute(template.render(), values).partition("?")
    reply = reply_from_params(body, template, WebhookClock(SYDNEY), now=NOW)
    assert (reply.from_number, reply.text) == (sender.strip(), text)


@pytest.mark.parametrize(
    ("given", "found"),
    [
        ("https://replies.office.example", ("https", "replies.office.example", 443)),
        ("https://replies.office.example/", ("https", "replies.office.example", 443)),
        ("http://10.0.0.5:8080", ("http", "10.0.0.5", 8080)),
    ],
)
def test_a_public_address_gives_scheme_host_and_port(
    given: str, found: tuple[str, str, int]
) -> None:
    assert public_address(given) == found


@pytest.mark.parametrize(
    "given",
    [
        "ftp://replies.example",
        "https://",
        "https://user:pw@replies.example",
        "https://replies.example/replies/x",
        "https://replies.example?x=1",
        "https://replies.example:99999",
        "replies.example",
    ],
)
def test_a_public_address_that_is_not_only_an_address_is_refused(given: str) -> None:
    with pytest.raises(TemplateError):
        public_address(given)
