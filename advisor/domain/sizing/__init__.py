"""The sizing engine: architecture -> memory -> speed -> cost -> ranking."""
