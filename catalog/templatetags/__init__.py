"""Template tags and filters for the pages: sortable headers, prices and numbers as people read
them."""
