"""The catalogue owns GPU facts: datasheet specs, providers, instance offers and their prices with
history, price feeds and the scheduled refresh. The bottom layer: it imports no other app of
ours (advisor and jobs read it through catalog.selectors)."""
