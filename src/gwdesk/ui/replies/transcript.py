"""A conversation as the Replies tab shows it: the transcript in bubbles and who is typing.

Pure rendering of what the conversation pane read (`ConversationEntry`: sent messages
and replies in time order): every string from outside (a reply, a status, an
operator's name) is escaped into the rich text the pane composes (`html_text`).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QPalette

from gwdesk.app.reply_inbox import ConversationEntry
from gwdesk.ui.formatting import local_time
from gwdesk.ui.plain_text import html_text


def typing_text(operators: Sequence[str]) -> str:
    """ "Sam is typing a reply…", "Sam and Lee are typing…" ("" for nobody)."""
    names = list(dict.fromkeys(name or "Someone" for name in operators))
    if not names:
        return ""
    if len(names) == 1:
        return f"{names[0]} is typing a reply…"
    return f"{', '.join(names[:-1])} and {names[-1]} are typing…"


def _bubble_colours(palette: QPalette) -> tuple[str, str, str]:
    """(incoming fill, outgoing fill, muted text) that suit the palette, light or dark."""
    base = palette.color(QPalette.ColorRole.Base)
    highlight = palette.color(QPalette.ColorRole.Highlight)
    dark = base.lightness() < 128
    incoming = base.lighter(160) if dark else palette.color(QPalette.ColorRole.AlternateBase)
    if not dark and incoming.lightness() > 240:
        incoming = base.darker(108)
    outgoing = highlight.darker(220) if dark else highlight.lighter(185)
    muted = palette.color(QPalette.ColorRole.PlaceholderText)
    return incoming.name(), outgoing.name(), muted.name()


def transcript_html(entries: Sequence[ConversationEntry], palette: QPalette) -> str:
    """The transcript as rich text; every customer-supplied string is escaped."""
    incoming_fill, outgoing_fill, muted = _bubble_colours(palette)
    parts = ['<table width="100%" cellspacing="0" cellpadding="0">']
    for entry in entries:
        text = html_text(entry.text)
        when = local_time(entry.at, False)
        if entry.incoming:
            meta = f"{when} · reply"
        elif not entry.ok:
            meta = f"{when} · <span style='color:#d32f2f'>not sent</span>"
        else:
            meta = f"{when} · {html_text(entry.status or 'sent')}"
        if not entry.incoming and entry.operator:
            meta = f"{meta} · {html_text(entry.operator)}"
        align, fill, pad = (
            ("left", incoming_fill, '<td width="22%"></td>')
            if entry.incoming
            else ("right", outgoing_fill, "")
        )
        cell = (
            f'<td bgcolor="{fill}" style="padding: 6px 9px;">{text}'
            f'<br><span style="color:{muted}; font-size: small;">{meta}</span></td>'
        )
        row = f"{cell}{pad}" if entry.incoming else f'<td width="22%"></td>{cell}'
        parts.append(
            f'<tr><td align="{align}" style="padding: 3px 0;">'
            f'<table cellspacing="0" cellpadding="0" width="100%"><tr>{row}</tr></table>'
            "</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)
