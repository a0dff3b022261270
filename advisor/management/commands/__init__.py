"""`size`: the sizing advisor on the command line, with the API's rules and JSON output."""
