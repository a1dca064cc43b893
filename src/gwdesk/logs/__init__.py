"""The account's log kept locally: synced from the gateway, queried and exported (Qt-free)."""
