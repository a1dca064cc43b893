"""The Lodge client: the gateway's legacy SOAP/HTTP service, its 13 operations on four ports."""
