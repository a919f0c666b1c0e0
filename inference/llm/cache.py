"""Persistent answer cache for LLM calls (SQLite).

The key is the sha256 of the backend, base URL, model, generation parameters and the exact messages; each
answer is committed as soon as it arrives, so a rerun after a crash or Ctrl-C re-sends nothing already
answered. An answer its validator refused is marked invalid and is not replayed: a rerun asks again. No API key is
part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path


def cache_key(endpoint, messages: list[dict], generation: dict) -> str:
    identity = {
        "backend": endpoint.backend,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "generation": generation,
        "messages": messages,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class AnswerCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path))
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
            "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL, valid INTEGER NOT NULL DEFAULT 1)"
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        if "valid" not in columns:  # a cache written before answers were validated in it
            self._db.execute("ALTER TABLE answers ADD COLUMN valid INTEGER NOT NULL DEFAULT 1")
        self._db.commit()

    def get(self, key: str) -> tuple[str, int, int] | None:
        row = self._db.execute(
            "SELECT text, prompt_tokens, completion_tokens FROM answers WHERE key = ? AND valid = 1", (key,)
        ).fetchone()
        return None if row is None else (row[0], row[1] or 0, row[2] or 0)

    def put(self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, 1)",
            (key, model, text, prompt_tokens, completion_tokens, time.time()),
        )
        self._db.commit()

    def mark_invalid(self, key: str) -> None:
        """Keep the row (it was paid for) but never replay it."""
        self._db.execute("UPDATE answers SET valid = 0 WHERE key = ?", (key,))
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM answers WHERE valid = 1").fetchone()[0]

    def close(self) -> None:
        self._db.close()
