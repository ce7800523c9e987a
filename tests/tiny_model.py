"""A tiny random causal LM and its byte-level BPE tokenizer, written to a folder in about a second, so
the training tests run the real trainer (peft, transformers' Trainer) without the embedded model."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Which event happened earlier? A: she slipped B: she fell. Answer with A or B. Answer: A",
    "Verify whether the following computation is correct. Q: What is 12 + 30? A: 42 The computation is True",
    "Write a correct and an incorrect answer (delimited by ||) to the question: Q: What is 7 - 2? A: 5 || 9",
    "0123456789 +-*/=?:|() abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ True False",
]


def tiny_base(folder: Path) -> Path:
    """Write a 2-layer Llama with a 300-token byte-level tokenizer (a chat template included) to ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<eos>", "<pad>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS * 4, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", pad_token="<pad>")
    tokenizer.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}<eos>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
