"""Reference implementations and converters the tests compare sapwood against."""
