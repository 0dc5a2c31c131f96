"""`python -m cartonize`: the command line."""

from cartonize.cli import main

raise SystemExit(main())
