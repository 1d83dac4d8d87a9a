"""The typed core that the stage modules call: importable and testable without DVC."""
