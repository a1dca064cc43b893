"""The Lodge client: the gateway's legacy SOAP/HTTP service, the spec's 13 operations."""
