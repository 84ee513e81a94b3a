"""Reading the Knowledge Graph export and building a database from it."""
