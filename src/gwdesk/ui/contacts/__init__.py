"""The Contacts tab: the profile's address book."""
