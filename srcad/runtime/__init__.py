"""What generated code calls at run time: the array namespace and gradient helpers."""
