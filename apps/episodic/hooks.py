"""Signals that let apps above episodic hand it what it may not import.

The profile app sits beside this one (same layer), so extraction cannot read a user profile
itself; the app that assembles contexts (above both) answers this signal instead.
"""

from django.dispatch import Signal

# Sent with agent= and resource= (or None); a receiver returns the user profile's text or "".
extraction_profile_requested = Signal()
