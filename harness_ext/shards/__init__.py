"""Sharded runs: a shard's share of the documents, how many shards a run can use, the shard values
and their merge."""
