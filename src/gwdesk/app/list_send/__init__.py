"""Sending to a list: a message the same for all, a contact group, personal messages.

The flow (`flow.ListSend`) decides what a list send checks, plans, screens, costs
and asks, records it, runs it and follows it; `policy` is the one place that says
when it asks; `duplicates` finds a send of the same text made a short while ago;
`totals` and `run` say what a send comes to, before and after, in words. The
console's Batch tab and `gwdesk send` render and answer what these return.

The types the console needs of the layers below (errors, outbox rows, contacts) are
named here, so it takes them from the flow that hands them over.
"""

from gwdesk.app.list_send.duplicates import DUPLICATE_WINDOW, Duplicate, ago, duplicate_of
from gwdesk.app.list_send.flow import (
    NO_OWN_NUMBER,
    ListSend,
    OwnNumberTest,
    PreparedSend,
    to_own_number_line,
)
from gwdesk.app.list_send.planning import (
    PlanFailure,
    PlanInputs,
    Planned,
    group_members,
    with_options,
)
from gwdesk.app.list_send.policy import SendFacts, question_for
from gwdesk.app.list_send.run import (
    FOLLOWING,
    FollowEnd,
    ListRun,
    RunEnd,
    Tone,
    follow_end,
    run_end,
    sending_line,
)
from gwdesk.app.list_send.totals import FIGURES, Line, Totals, list_totals, plan_totals
from gwdesk.app.send_values import StoreAwayError
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.store.contacts import Contact
from gwdesk.store.database import StoreError
from gwdesk.store.optouts import OptOut
from gwdesk.store.outbox import EntryState, OutboxEntry

__all__ = [
    "DUPLICATE_WINDOW",
    "FIGURES",
    "FOLLOWING",
    "NO_OWN_NUMBER",
    "Contact",
    "Duplicate",
    "EntryState",
    "FollowEnd",
    "GatewayError",
    "Line",
    "ListRun",
    "ListSend",
    "OptOut",
    "OutboxEntry",
    "OwnNumberTest",
    "PlanFailure",
    "PlanInputs",
    "Planned",
    "PreparedSend",
    "RunEnd",
    "SendFacts",
    "StoreAwayError",
    "StoreError",
    "Tone",
    "Totals",
    "ValidationError",
    "ago",
    "duplicate_of",
    "follow_end",
    "group_members",
    "list_totals",
    "plan_totals",
    "question_for",
    "run_end",
    "sending_line",
    "to_own_number_line",
    "with_options",
]
