// oracle.js: tokenizes texts with Hugging Face's tokenizers library (its
// official Node.js binding, installed by scripts/install-tokenizers.sh) for
// pkg/ml/tokenizer's oracle test.
//
// Usage: node oracle.js <directory of the tokenizers package> < request.json
// The request is {"models": [model...], "texts": [string...],
// "truncated": [string...]}; a model is {"name", "file"} for a
// tokenizer.json, or {"name", "vocab", "lowercase", "maxLength"} for a BERT
// vocab.txt, which is given the pipeline transformers' BertTokenizerFast
// builds from a vocab.txt (BertConverter: BertNormalizer with clean_text,
// handle_chinese_chars, strip_accents following lowercase, BertPreTokenizer,
// WordPiece with "##" and 100 characters, [CLS] $A [SEP]).
// The answer is {name: {"ids": [[id...] per text], "truncated": [[id...]
// per truncated text]}}: "ids" with padding and truncation disabled,
// "truncated" with truncation to the model's maxLength (the file's own
// truncation.max_length when it has one) and no padding.
'use strict';
const fs = require('fs');
const tk = require(process.argv[2]);

function fromVocab(m) {
  const lines = fs.readFileSync(m.vocab, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const vocab = {};
  lines.forEach((tok, i) => { vocab[tok.replace(/\r$/, '')] = i; });
  const added = [];
  for (const name of ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']) {
    if (name in vocab) added.push({ id: vocab[name], content: name, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  }
  added.sort((a, b) => a.id - b.id);
  const special = (name) => ({ id: name, ids: [vocab[name]], tokens: [name] });
  const doc = {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: m.lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
  return tk.Tokenizer.fromString(JSON.stringify(doc));
}

// normalizers by name, for a request {"normalize": [name...], "texts": [...]}:
// the answer is {name: [normalized text...]}.
const normalizers = {
  bertAll: () => tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true }),
  bertCased: () => tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: false, lowercase: false }),
  bertStripOnly: () => tk.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false }),
  lowercase: () => tk.lowercase(),
  stripAccents: () => tk.stripAccentsNormalizer(),
  nfd: () => tk.nfdNormalizer(),
  nfc: () => tk.nfcNormalizer(),
  nfkd: () => tk.nfkdNormalizer(),
  nfkc: () => tk.nfkcNormalizer(),
  strip: () => tk.stripNormalizer(true, true),
};

async function main() {
  const req = JSON.parse(fs.readFileSync(0, 'utf8'));
  const out = {};
  if (req.normalize) {
    for (const name of req.normalize) {
      const n = normalizers[name]();
      out[name] = req.texts.map((t) => n.normalizeString(t));
    }
    process.stdout.write(JSON.stringify(out));
    return;
  }
  for (const m of req.models) {
    const tok = m.file ? tk.Tokenizer.fromFile(m.file) : fromVocab(m);
    tok.disablePadding();
    tok.disableTruncation();
    const ids = (await tok.encodeBatch(req.texts)).map((e) => e.getIds());
    tok.setTruncation(m.maxLength);
    const truncated = (await tok.encodeBatch(req.truncated || [])).map((e) => e.getIds());
    out[m.name] = { ids, truncated };
  }
  process.stdout.write(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
