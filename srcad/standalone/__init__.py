"""Writing derivatives and the functions that call them into standalone modules."""
