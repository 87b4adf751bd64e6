"""Servers the storage tests start on 127.0.0.1 (and only there)."""
