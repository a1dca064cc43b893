"""Team mode: shared stores on a real PostgreSQL server the tests start themselves."""
