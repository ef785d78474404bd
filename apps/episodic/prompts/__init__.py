"""The prompts of episodic memory, one module per task.

Each module's VERSION is stored with what its prompt produced (an extraction run, and through it
every entry it proposed), so that a changed prompt can be told apart in the data.
"""
