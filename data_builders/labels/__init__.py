"""A user's own labels: readers and writers for the field's formats, checked record by record, and the import
that turns them into the layout the encoder recipes read (`radmetrics data import`)."""
