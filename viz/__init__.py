"""Pure chart builders: DataFrames and arrays in, Altair charts or small HTML-escaped views out."""
