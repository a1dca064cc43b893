"""Gone: blocking work is `gwdesk.ui.tasks.BlockingJob`. Only `alive` is left here, for
`ui/batch/tab.py` and `ui/outbox/dialog.py` (rewritten beside this change) until they
import it from `gwdesk.ui.tasks`; delete this module then."""

from gwdesk.ui.tasks import alive

__all__ = ["alive"]
