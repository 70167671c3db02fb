"""``python -m reclaimlab`` runs the CLI."""

from .cli import main

raise SystemExit(main())
