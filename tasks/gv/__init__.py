"""Generator-validator (GV) consistency tasks (Li et al., "Benchmarking and Improving Generator-Validator
Consistency of LMs", ICLR 2024): arithmetic, plan arithmetic, TriviaQA, style transfer, prompt
prioritisation and harmful questions, each a two-stage lm-eval task (see ``README.md`` here), plus
:mod:`.export` for consistency fine-tuning data.
"""
