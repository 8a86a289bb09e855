// probe.js: asks Hugging Face's tokenizers library (its Node.js binding),
// one code point at a time, every character decision that svc's tokenizer
// makes, and prints them as JSON for internal/gentables.
// Usage: node probe.js <directory of the tokenizers package>
'use strict';
const tk = require(process.argv[2]);

const bert = (o) => tk.bertNormalizer(Object.assign({ cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: false }, o));
const clean = bert({ cleanText: true });
const chinese = bert({ handleChineseChars: true });
const strip = bert({ stripAccents: true });
const lower = tk.lowercase();
const nfd = tk.nfdNormalizer();
const nfc = tk.nfcNormalizer();
const nfkd = tk.nfkdNormalizer();
const combining = tk.stripAccentsNormalizer();
const pre = tk.bertPreTokenizer();

// Sets are collected as sorted [lo, hi] ranges.
function rangeSet() {
  const r = [];
  return {
    r,
    add(c) {
      const last = r[r.length - 1];
      if (last && last[1] === c - 1) last[1] = c;
      else r.push([c, c]);
    },
  };
}
const sets = {};
for (const name of ['whitespace', 'punct', 'cleanDrop', 'cleanSpace', 'chinese', 'mn', 'nonStarter', 'combining']) sets[name] = rangeSet();
const decomp = [];
const decompK = []; // compatibility decompositions that differ from the canonical one
const compose = []; // [composite, first, second] of each primary composite (Hangul excepted)
const lowerMap = [];
const cps = (s) => Array.from(s, (ch) => ch.codePointAt(0));
const oddities = [];
const R1 = '\u0334'; // canonical combining class 1
const R240 = '\u0345'; // canonical combining class 240

function probeOne(c) {
  const s = String.fromCodePoint(c);
  const words = pre.preTokenizeString('a' + s + 'b').map((w) => w[0]);
  if (words.length === 2 && words[0] === 'a' && words[1] === 'b') sets.whitespace.add(c);
  else if (words.length === 3 && words[1] === s) sets.punct.add(c);
  else if (!(words.length === 1 && words[0] === 'a' + s + 'b')) oddities.push(['pre', c, words]);

  const cl = clean.normalizeString(s);
  if (cl === '') sets.cleanDrop.add(c);
  else if (cl === ' ' && s !== ' ') sets.cleanSpace.add(c);
  else if (cl !== s) oddities.push(['clean', c, cl]);

  const ch = chinese.normalizeString(s);
  if (ch === ' ' + s + ' ') sets.chinese.add(c);
  else if (ch !== s) oddities.push(['chinese', c, ch]);

  const d = nfd.normalizeString(s);
  const k = nfkd.normalizeString(s);
  if (k !== d) decompK.push([c, cps(k)]);
  if (d !== s) {
    decomp.push([c, cps(d)]);
    if (nfc.normalizeString(s) === s && !(c >= 0xac00 && c <= 0xd7a3)) {
      // A primary composite: the library composes it from its canonical pair.
      const dc = cps(d);
      const first = nfc.normalizeString(String.fromCodePoint(...dc.slice(0, -1)));
      const second = dc[dc.length - 1];
      if (cps(first).length === 1 && nfc.normalizeString(first + String.fromCodePoint(second)) === s) compose.push([c, first.codePointAt(0), second]);
      else oddities.push(['compose', c, dc]);
    }
  } else {
    if (strip.normalizeString(s) === '') sets.mn.add(c);
    const a = nfd.normalizeString(s + R1);
    const b = nfd.normalizeString(R240 + s);
    if (a === R1 + s || b === s + R240) sets.nonStarter.add(c);
  }

  const lo = lower.normalizeString(s);
  if (lo !== s) lowerMap.push([c, cps(lo)]);

  if (combining.normalizeString(s) === '') sets.combining.add(c);
}

// plain reports that no code point of cs has any property the tables
// record, checking the whole block at once: every component maps each
// character on its own, so the block is unchanged (and one word for the
// pre-tokenizer) exactly when each character is; interleaving R1 and R240
// exposes any non-starter by a swap.
function plain(cs) {
  const s = String.fromCodePoint(...cs);
  const words = pre.preTokenizeString(s);
  if (words.length !== 1 || words[0][0] !== s) return false;
  for (const n of [clean, chinese, nfd, nfkd, lower, combining, strip]) if (n.normalizeString(s) !== s) return false;
  const x = cs.map((c) => String.fromCodePoint(c) + R1).join('');
  const y = cs.map((c) => R240 + String.fromCodePoint(c)).join('');
  return nfd.normalizeString(x) === x && nfd.normalizeString(y) === y;
}

for (let lo = 0; lo <= 0x10ffff; lo += 256) {
  const cs = [];
  for (let c = lo; c < lo + 256; c++) if (c < 0xd800 || c > 0xdfff) cs.push(c); // surrogates: no Go string holds them
  if (cs.length && !plain(cs)) cs.forEach(probeOne);
}

// Word characters of the added tokens' single_word rule: an added token
// "\u2603" with single_word matches only between non-word characters. A
// block of code points is first checked at once (c1 T c2 T ... cn T: every
// T matches exactly when no ci is a word character); only blocks that have
// one are probed a code point at a time.
async function wordChars() {
  const T = '\u2603';
  const doc = {
    version: '1.0', truncation: null, padding: null, normalizer: null, post_processor: null, decoder: null,
    added_tokens: [{ id: 2, content: T, single_word: true, lstrip: false, rstrip: false, normalized: false, special: false }],
    pre_tokenizer: { type: 'WhitespaceSplit' },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { '[UNK]': 0, x: 1 } },
  };
  const tok = tk.Tokenizer.fromString(JSON.stringify(doc));
  const matches = (e) => e.getIds().filter((id) => id === 2).length;
  const blocks = [];
  for (let lo = 0; lo <= 0x10ffff; lo += 256) {
    const cs = [];
    for (let c = lo; c < lo + 256; c++) if (c < 0xd800 || c > 0xdfff) cs.push(c);
    if (cs.length) blocks.push(cs);
  }
  const whole = await tok.encodeBatch(blocks.map((cs) => cs.map((c) => String.fromCodePoint(c) + T).join('')));
  const suspects = [];
  blocks.forEach((cs, i) => { if (matches(whole[i]) !== cs.length) suspects.push(...cs); });
  const one = await tok.encodeBatch(suspects.map((c) => String.fromCodePoint(c) + T));
  const set = rangeSet();
  suspects.forEach((c, i) => { if (matches(one[i]) === 0) set.add(c); });
  return set.r;
}

const out = { version: require(process.argv[2] + '/package.json').version, decomp, decompK, compose, lower: lowerMap, oddities };
for (const k of Object.keys(sets)) out[k] = sets[k].r;
wordChars().then((w) => {
  out.word = w;
  process.stdout.write(JSON.stringify(out));
}).catch((e) => { console.error(e); process.exit(1); });
