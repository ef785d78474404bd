#!/usr/bin/env python
"""Django's command-line utility for Memory Console."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
    from django.core.management import execute_from_command_line
    from django.db import OperationalError

    try:
        execute_from_command_line(sys.argv)
    except OperationalError as error:
        from apps.core.database_errors import unusable_database_message

        message = unusable_database_message(error)
        if message is None:
            raise
        sys.exit(message)  # one line on stderr, exit status 1


if __name__ == "__main__":
    main()
