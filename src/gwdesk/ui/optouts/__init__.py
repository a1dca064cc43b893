"""The Opt-outs tab: the account's opt-out list, its changes by hand, import and export."""
