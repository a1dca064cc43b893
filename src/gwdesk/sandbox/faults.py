"""Deterministic fault injection: the sandbox misbehaves on purpose, reproducibly.

A client's retries, time-outs and "was it lodged or not?" reconciliation can only
be tested against a gateway that fails the way real ones do: slowly, with 5xx and
429 answers, with proxies' HTML pages, with truncated bodies, and with connections
that drop before or after the work was done. The fault plan owns its own
`random.Random(seed)`, and every decision is drawn when a request arrives, before
any await, so the same seed and the same request order give the same faults.

Spec grammar (documented for users in docs/sandbox.md)::

    spec    := rule (";" rule)*
    rule    := keys ":" effect ("," effect)*
    keys    := key ("+" key)*          token simple_send send status logs balance
                                       account_info replies lodge wsdl, or * (all but wsdl)
    effect  := "latency=" SECONDS ["-" SECONDS]
             | kind "=" RATE ["@" ARG]
    kind    := 500 | 503 | 429 | html | 404 | drop_before | drop_after | slow | malformed

`404=1` makes an endpoint absent, as on a gateway that does not have it (the real
service and this spec differ on the account resources), so clients' fallbacks can
be tested.

An endpoint's own rule overrides `*` for the same effect; among rules of the same
reach the later wins. The rates of one endpoint may add up to at most 1.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import web

from gwdesk.sandbox.config import LODGE_PATH
from gwdesk.sandbox.http_util import BodyTooLarge, Handler, failure, json_response, read_limited
from gwdesk.sandbox.state import STATE

#: Fault keys by lower-case path: the REST paths match in any letter case.
REST_ENDPOINTS: Final = {
    "/v2/oauth/access_token": "token",
    "/v2/message/simple_send": "simple_send",
    "/v2/message/send": "send",
    "/v2/message/status": "status",
    "/v2/message/logs": "logs",
    "/v2/account/balance": "balance",
    "/v2/account/info": "account_info",
    "/v2/replies/getbydate": "replies",
}
ENDPOINTS: Final = (*REST_ENDPOINTS.values(), "lodge", "wsdl")
#: `*` leaves the WSDL alone: a client that cannot load the WSDL never reaches the
#: operations whose failures a test is usually after. Name `wsdl` to fault it.
WILDCARD_ENDPOINTS: Final = tuple(e for e in ENDPOINTS if e != "wsdl")
#: Outcomes in the order a request's single roll walks through them.
OUTCOMES: Final = (
    "drop_before",
    "500",
    "503",
    "429",
    "html",
    "404",
    "drop_after",
    "slow",
    "malformed",
)
#: Outcomes that answer without the request being processed.
UNPROCESSED: Final = frozenset({"drop_before", "500", "503", "429", "html", "404"})
HTML_STATUSES: Final = (502, 503, 504)
MAX_SECONDS: Final = 600.0
DEFAULT_RETRY_AFTER: Final = 1.0
DEFAULT_SLOW: Final = 5.0
FAULT_HEADER: Final = "X-Sandbox-Fault"


class FaultSpecError(ValueError):
    """A fault spec the sandbox cannot follow; the message says which part and why."""


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    rate: float
    arg: float | None = None
    """Retry-After seconds (429, 503), delay seconds (slow) or status (html)."""


@dataclass(frozen=True, slots=True)
class EndpointPlan:
    latency: tuple[float, float] | None
    outcomes: tuple[Outcome, ...]
    """In `OUTCOMES` order, so one roll picks at most one of them."""

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.latency is not None:
            out["latency"] = list(self.latency)
        for outcome in self.outcomes:
            if outcome.arg is None:
                out[outcome.kind] = outcome.rate
            else:
                arg = int(outcome.arg) if outcome.arg.is_integer() else outcome.arg
                out[outcome.kind] = {"rate": outcome.rate, "arg": arg}
        return out


@dataclass(frozen=True, slots=True)
class FaultSpec:
    text: str
    endpoints: Mapping[str, EndpointPlan]

    def describe(self) -> dict[str, Any]:
        return {name: plan.describe() for name, plan in self.endpoints.items()}


# ---- parsing ----------------------------------------------------------------------------------


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FaultSpecError(f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise FaultSpecError(f"{what} must be a finite number, not {text!r}")
    return value


def _seconds(text: str, what: str) -> float:
    value = _number(text.strip(), what)
    if not 0 <= value <= MAX_SECONDS:
        raise FaultSpecError(f"{what} must be from 0 to {MAX_SECONDS:g} seconds, not {text!r}")
    return value


def _latency(value: str) -> tuple[float, float]:
    low_text, dash, high_text = value.partition("-")
    if not low_text.strip() or (dash and not high_text.strip()):
        raise FaultSpecError(
            f"latency must be seconds or a range LOW-HIGH of seconds, not {value.strip()!r}"
        )
    low = _seconds(low_text, "latency")
    high = _seconds(high_text, "latency") if dash else low
    if high < low:
        raise FaultSpecError(f"latency range {value!r} runs backwards")
    return (low, high)


def _outcome(kind: str, value: str) -> Outcome:
    rate_text, at, arg_text = value.partition("@")
    rate = _number(rate_text.strip(), f"the rate of {kind}")
    if not 0 <= rate <= 1:
        raise FaultSpecError(f"the rate of {kind} must be from 0 to 1, not {rate_text.strip()!r}")
    arg: float | None = None
    if kind in ("429", "503"):
        default = DEFAULT_RETRY_AFTER if kind == "429" else None
        arg = _seconds(arg_text, f"Retry-After of {kind}") if at else default
        if arg is not None and arg != int(arg):
            raise FaultSpecError(f"Retry-After of {kind} must be whole seconds, not {arg_text!r}")
    elif kind == "slow":
        arg = _seconds(arg_text, "the delay of slow") if at else DEFAULT_SLOW
    elif kind == "html":
        arg = float(HTML_STATUSES[0])
        if at:
            status = arg_text.strip()
            if status not in {str(s) for s in HTML_STATUSES}:
                raise FaultSpecError(
                    f"html takes a status of {', '.join(map(str, HTML_STATUSES))}, not {status!r}"
                )
            arg = float(status)
    elif at:
        raise FaultSpecError(f"{kind} takes no @ argument")
    return Outcome(kind, rate, arg)


def _keys(text: str) -> tuple[str, ...]:
    keys: list[str] = []
    for raw in text.split("+"):
        key = raw.strip().lower()
        if key == "*":
            keys.extend(WILDCARD_ENDPOINTS)
        elif key in ENDPOINTS:
            keys.append(key)
        else:
            raise FaultSpecError(
                f"unknown endpoint {raw.strip()!r}; use {', '.join(ENDPOINTS)} or *"
            )
    return tuple(keys)


def parse_spec(text: str) -> FaultSpec:
    """Parse a fault spec; an empty one means no faults."""
    if not isinstance(text, str):
        raise FaultSpecError("the fault spec must be a string")
    # effects[endpoint][kind] = (specificity, value); a named endpoint beats `*`.
    effects: dict[str, dict[str, tuple[int, Any]]] = {}
    for rule in text.split(";"):
        if not rule.strip():
            continue
        keys_text, colon, body = rule.partition(":")
        if not colon:
            raise FaultSpecError(f"rule {rule.strip()!r} needs 'endpoint:effect=value'")
        keys = _keys(keys_text)
        specific = 0 if keys_text.strip() == "*" else 1
        if not body.strip():
            raise FaultSpecError(f"rule {rule.strip()!r} names no effect")
        for item in body.split(","):
            name, eq, value = item.partition("=")
            name = name.strip().lower()
            if not eq or not value.strip():
                raise FaultSpecError(f"effect {item.strip()!r} needs a value: name=value")
            parsed: Any
            if name == "latency":
                parsed = _latency(value)
            elif name in OUTCOMES:
                parsed = _outcome(name, value)
            else:
                raise FaultSpecError(
                    f"unknown effect {name!r}; use latency or {', '.join(OUTCOMES)}"
                )
            for key in keys:
                slot = effects.setdefault(key, {})
                if name not in slot or slot[name][0] <= specific:
                    slot[name] = (specific, parsed)
    plans: dict[str, EndpointPlan] = {}
    for endpoint in ENDPOINTS:
        slot = effects.get(endpoint, {})
        if not slot:
            continue
        outcomes = tuple(slot[k][1] for k in OUTCOMES if k in slot and slot[k][1].rate > 0)
        total = sum(o.rate for o in outcomes)
        if total > 1 + 1e-9:
            raise FaultSpecError(f"the fault rates of {endpoint} add up to {total:g}; at most 1")
        latency = slot["latency"][1] if "latency" in slot else None
        if latency == (0.0, 0.0):
            latency = None
        if latency is not None or outcomes:
            plans[endpoint] = EndpointPlan(latency, outcomes)
    return FaultSpec(text.strip(), plans)


# ---- the plan at run time ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    latency: float
    outcome: Outcome | None


def _stream(seed: int | None) -> random.Random:
    # Exactly `random.Random(seed)` (documented), so a test can pick a seed whose first
    # rolls hit or miss by replaying the stream; it is a separate object from the
    # engine's, so neither consumes the other's draws.
    return random.Random(seed)


@dataclass
class FaultInjector:
    """The active plan, its random stream and what it has done so far."""

    spec: FaultSpec
    seed: int | None
    rng: random.Random = field(init=False)
    requests: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)
    by_endpoint: dict[str, Counter[str]] = field(default_factory=dict)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.rng = _stream(self.seed)

    def replace(self, spec: FaultSpec, seed: int | None) -> None:
        """A new plan starts a fresh random stream and fresh counters."""
        self.spec, self.seed = spec, seed
        self.rng = _stream(seed)
        self.requests.clear()
        self.injected.clear()
        self.by_endpoint.clear()

    def decide(self, endpoint: str) -> Decision:
        """Draw this request's faults now, synchronously, so arrival order fixes them."""
        plan = self.spec.endpoints.get(endpoint)
        self.requests[endpoint] += 1
        if plan is None:
            return Decision(0.0, None)
        latency = 0.0
        if plan.latency is not None:
            low, high = plan.latency
            latency = low if low == high else self.rng.uniform(low, high)
            if latency > 0:
                self._count(endpoint, "latency")
        chosen: Outcome | None = None
        if plan.outcomes:
            roll = self.rng.random()
            for outcome in plan.outcomes:
                if roll < outcome.rate:
                    chosen = outcome
                    self._count(endpoint, outcome.kind)
                    break
                roll -= outcome.rate
        return Decision(latency, chosen)

    def _count(self, endpoint: str, kind: str) -> None:
        self.injected[kind] += 1
        self.by_endpoint.setdefault(endpoint, Counter())[kind] += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "spec": self.spec.text,
            "seed": self.seed,
            "plan": self.spec.describe(),
            "requests": dict(self.requests),
            "injected": {kind: self.injected.get(kind, 0) for kind in ("latency", *OUTCOMES)},
            "by_endpoint": {name: dict(counts) for name, counts in self.by_endpoint.items()},
        }

    async def pause(self, request: web.Request, seconds: float) -> bool:
        """Wait `seconds`; False as soon as the client hung up (or the sandbox stops)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            if not _connected(request):
                return False
            remaining = deadline - loop.time()
            if remaining <= 0 or self.stopping.is_set():
                return True
            await asyncio.sleep(min(remaining, 0.05))


FAULTS: Final = web.AppKey("gwdesk_sandbox_faults", FaultInjector)


# ---- the middleware ---------------------------------------------------------------------------


def endpoint_of(request: web.Request) -> str | None:
    """The fault key of a request; None for `/sandbox/` and anything unnamed."""
    name = REST_ENDPOINTS.get(request.path.lower())
    if name is not None:
        return name
    if request.path.lower().startswith(LODGE_PATH.lower()):
        is_wsdl = request.method == "GET" and any(k.lower() == "wsdl" for k in request.query)
        return "wsdl" if is_wsdl else "lodge"
    return None


def _connected(request: web.Request) -> bool:
    transport = request.transport
    return transport is not None and not transport.is_closing()


def _drop(request: web.Request) -> web.StreamResponse:
    """Close the connection without a byte of response.

    aiohttp then fails to write the returned response, takes that as the client
    having gone away, and finishes the connection quietly (no traceback logged).
    """
    transport = request.transport
    if transport is not None:
        transport.abort()
    return web.Response(status=204)


def _html_page(status: int) -> web.Response:
    reason = {502: "Bad Gateway", 503: "Service Temporarily Unavailable", 504: "Gateway Time-out"}
    title = f"{status} {reason[status]}"
    page = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
        f"<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n"
    )
    response = web.Response(text=page, status=status, content_type="text/html")
    response.headers[FAULT_HEADER] = "html"
    return response


def _error(request: web.Request, endpoint: str, outcome: Outcome) -> web.Response:
    """A 500, 503, 429 or 404 in the face's own shape: envelope for REST, text for Lodge."""
    status = int(outcome.kind)
    headers = {FAULT_HEADER: outcome.kind}
    if outcome.arg is not None:
        headers["Retry-After"] = str(int(outcome.arg))
    messages = {
        500: "The gateway could not process the request.",
        503: "The gateway is temporarily unavailable.",
        429: "Too many requests; slow down.",
        404: f"No such endpoint: {request.path[:80]}.",
    }
    if outcome.arg is not None:
        messages[status] += f" Retry after {int(outcome.arg)} seconds."
    if endpoint in ("lodge", "wsdl"):
        text = {
            500: "Server was unable to process request.",
            503: "Service Unavailable",
            429: "Too Many Requests",
            404: "Not Found",
        }
        return web.Response(text=text[status], status=status, headers=headers)
    return failure(status, messages[status], headers=headers)


def _malformed(response: web.StreamResponse) -> web.Response:
    """The real answer cut in half, sent whole with a 200: a mangled body, not a reset."""
    body = response.body if isinstance(response, web.Response) else None
    if isinstance(body, bytes) and len(body) > 1:
        cut = body[: len(body) // 2]
    else:
        cut = b'{"Data":{"Message":'
    mangled = web.Response(
        body=cut,
        status=200,
        content_type=response.content_type or "application/json",
        charset=response.charset,
    )
    mangled.headers[FAULT_HEADER] = "malformed"
    return mangled


async def _process(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        return exc


@web.middleware
async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Apply the fault plan to the gateway's endpoints; `/sandbox/` is never touched."""
    injector = request.app.get(FAULTS)
    endpoint = endpoint_of(request)
    if injector is None or endpoint is None:
        return await handler(request)
    decision = injector.decide(endpoint)
    # A client that gave up during the latency finds nothing lodged.
    if decision.latency and not await injector.pause(request, decision.latency):
        return _drop(request)
    outcome = decision.outcome
    if outcome is None:
        return await handler(request)
    kind = outcome.kind
    if kind == "drop_before":
        return _drop(request)
    if kind == "html":
        assert outcome.arg is not None
        return _html_page(int(outcome.arg))
    if kind in UNPROCESSED:
        return _error(request, endpoint, outcome)
    response = await _process(request, handler)
    if kind == "drop_after":
        return _drop(request)
    if kind == "slow":
        assert outcome.arg is not None
        await injector.pause(request, outcome.arg)
        response.headers[FAULT_HEADER] = "slow"
        return response
    return _malformed(response)


# ---- runtime control --------------------------------------------------------------------------


def _control_error(message: str, status: int = 400) -> web.Response:
    return json_response({"error": message}, status)


async def get_faults(request: web.Request) -> web.StreamResponse:
    return json_response(request.app[FAULTS].snapshot())


async def put_faults(request: web.Request) -> web.StreamResponse:
    """Replace the plan: `{"spec": "...", "seed": N}`; without `seed`, the configured one."""
    try:
        raw = await read_limited(request, 64 * 1024)
    except BodyTooLarge as exc:
        return _control_error(f"The body is larger than {exc.limit} bytes.", 413)
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return _control_error('The body must be JSON: {"spec": "...", "seed": N}.')
    if not isinstance(body, dict) or not isinstance(body.get("spec"), str):
        return _control_error('The body must be a JSON object with a string "spec".')
    unknown = sorted(set(body) - {"spec", "seed"})
    if unknown:
        return _control_error(f"Unknown field(s): {', '.join(unknown)}; use spec and seed.")
    seed = body.get("seed", request.app[STATE].config.seed)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return _control_error('"seed" must be a whole number or null.')
    try:
        spec = parse_spec(body["spec"])
    except FaultSpecError as exc:
        return _control_error(f"Bad fault spec: {exc}.")
    injector = request.app[FAULTS]
    injector.replace(spec, seed)
    return json_response(injector.snapshot())


async def _stop_pauses(app: web.Application) -> None:
    app[FAULTS].stopping.set()


def register(app: web.Application) -> None:
    """Install the configured plan (a bad `--faults` fails here) and its control routes."""
    config = app[STATE].config
    app[FAULTS] = FaultInjector(parse_spec(config.faults), config.seed)
    app.router.add_get("/sandbox/faults", get_faults)
    app.router.add_put("/sandbox/faults", put_faults)
    app.on_shutdown.append(_stop_pauses)
