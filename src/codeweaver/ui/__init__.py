"""User interfaces over the service layer (the web page lives in `api/static`)."""
