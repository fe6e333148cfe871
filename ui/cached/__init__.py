"""What pages compute: st.cache_data computations and plain functions that return values (nothing here draws)."""
