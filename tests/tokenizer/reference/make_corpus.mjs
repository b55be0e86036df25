// A deterministic corpus of varied UTF-8 text for checking the GPT-2 tokenizer against the
// JavaScript references (compare.mjs). The same seed gives the same text on every machine and
// node version: a small seeded PRNG drives everything (no Math.random, no clock, no locale).
//
//   node make_corpus.mjs OUT.txt [--seed N] [--bytes N]     (default seed 1, 1,200,000 bytes)
//
// The text is a shuffle of sections, each aimed at one part of GPT-2's pre-tokenizer pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// and of byte-level BPE: English prose, contractions, many scripts, emoji sequences, combining
// marks, white space of every kind, numbers, code, URLs, punctuation, random code points,
// long runs, "<|endoftext|>" and near misses, and a word-level mix of all of them.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Planes 4-13 hold no assigned character (Unicode 16) and planes 15-16 are private use: each is
// one general category throughout (Cn, Co), so every 61st of them (61 is prime to 64: every
// value of each continuation byte comes up), and each plane's first and last two, stand for the
// rest in the tests that take every scalar value. They are 70% of all scalar values and were most
// of those tests' time.
export function sampledAway(c) {
  const uniform = (c >= 0x40000 && c <= 0xdffff) || c >= 0xf0000;
  const edge = (c & 0xffff) < 2 || (c & 0xffff) > 0xfffd;
  return uniform && !edge && c % 61 !== 0;
}

// SplitMix32-style generator: 32-bit state, good enough mixing for test data.
export function makeRng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const rng = {
    u32: next,
    float: () => next() / 4294967296,
    int: (lo, hi) => lo + Math.floor((next() / 4294967296) * (hi - lo + 1)), // inclusive
    pick: (arr) => arr[Math.floor((next() / 4294967296) * arr.length)],
    chance: (p) => next() / 4294967296 < p,
  };
  return rng;
}

const cp = (...codes) => String.fromCodePoint(...codes);
const fromRange = (rng, lo, hi) => cp(rng.int(lo, hi));
const repeat = (n, f) => Array.from({ length: n }, f).join('');

const WORDS = (
  'the of and to in is was that for it with as on be at by this had not are but from or have an they which one you ' +
  'were her all she there would their we him been has when who will more no if out so said what up its about into than ' +
  'them can only other new some could time these two may then do first any my now such like our over man me even most ' +
  'made after also did many before must through back years where much your way well down should because each just those ' +
  'people how too little state good very make world still own see men work long get here between both life being under ' +
  'never day same another know while last might us great old year off come since against go came right used take three ' +
  'attention softmax normalization temperature gradient token transformer selection distance separability heads layers ' +
  'weights logits probability vocabulary encoder decoder hello world heroes wear capes quick brown fox jumps lazy dog ' +
  'internationalization antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis Mississippi'
).split(' ');

const CONTRACTIONS = [
  "don't", "can't", "won't", "isn't", "I'm", "you're", "they've", "we'll", "he'd", "it's", "she's", "that'll", "we'd",
  "I've", "who's", "let's", "ma'am", "o'clock", "y'all", "rock'n'roll", "'tis", "'twas", "'em", "ne'er", "'round",
  "DON'T", "CAN'T", "IT'S", "I'M", "YOU'RE", "WE'LL", "THEY'VE", "HE'D", "SHE'S", "It'S", "You'Re", "We'Ll", "I'D",
  "don’t", "it’s", "I’m", "you’re", "we’ll", "they’ve", "she’d", "‘quoted’", "’s", "‘s",
  "''s", "'s'", "'''", "' s", "'re'", "'ll've", "'d'", "'m'm", "'t", "'ss", "'ree", "'vee", "'lll", "'x", "'", "'1", "'é",
  "James's", "boss'", "the '90s", "'S", "'T", "'RE", "'VE", "'M", "'LL", "'D", "`s", "ʼs", "′s",
];

// Letter ranges of many scripts, with the combining marks each script uses.
const SCRIPTS = [
  { name: 'cyrillic', letters: [[0x0430, 0x044f], [0x0410, 0x042f], [0x0450, 0x045f]], marks: [[0x0301, 0x0301]] },
  { name: 'greek', letters: [[0x03b1, 0x03c9], [0x0391, 0x03a9], [0x1f00, 0x1f15]], marks: [[0x0342, 0x0345]] },
  { name: 'arabic', letters: [[0x0627, 0x064a], [0x0671, 0x06d3]], marks: [[0x064b, 0x0652]], digits: [0x0660, 0x0669] },
  { name: 'hebrew', letters: [[0x05d0, 0x05ea]], marks: [[0x05b0, 0x05bc], [0x05c1, 0x05c2]] },
  { name: 'devanagari', letters: [[0x0915, 0x0939], [0x0905, 0x0914]], marks: [[0x093e, 0x094d], [0x0901, 0x0903]], digits: [0x0966, 0x096f] },
  { name: 'thai', letters: [[0x0e01, 0x0e2e], [0x0e40, 0x0e44]], marks: [[0x0e31, 0x0e31], [0x0e34, 0x0e3a], [0x0e47, 0x0e4e]], digits: [0x0e50, 0x0e59] },
  { name: 'cjk', letters: [[0x4e00, 0x9fff], [0x3400, 0x4dbf]], nospace: true },
  { name: 'cjk-ext-b', letters: [[0x20000, 0x2a6df]], nospace: true },
  { name: 'hangul', letters: [[0xac00, 0xd7a3]] },
  { name: 'kana', letters: [[0x3041, 0x3096], [0x30a1, 0x30fa]], marks: [[0x3099, 0x309a]], nospace: true },
  { name: 'georgian', letters: [[0x10d0, 0x10fa]] },
  { name: 'armenian', letters: [[0x0561, 0x0586], [0x0531, 0x0556]] },
  { name: 'ethiopic', letters: [[0x1200, 0x1248]] },
  { name: 'tamil', letters: [[0x0b95, 0x0bb9]], marks: [[0x0bbe, 0x0bcd]], digits: [0x0be6, 0x0bef] },
  { name: 'bengali', letters: [[0x0995, 0x09b9]], marks: [[0x09be, 0x09cc]], digits: [0x09e6, 0x09ef] },
  { name: 'latin-ext', letters: [[0x00c0, 0x00ff], [0x0100, 0x017f], [0x1e00, 0x1eff]], marks: [[0x0300, 0x036f]] },
  { name: 'math-alnum', letters: [[0x1d400, 0x1d4ff]], digits: [0x1d7ce, 0x1d7ff] },
  { name: 'gothic', letters: [[0x10330, 0x1034a]] },
];

const PHRASES = [
  'Привет, как дела? Всё хорошо.', 'Γειά σου Κόσμε! Καλημέρα.', 'مرحبا بالعالم، كيف حالك؟', 'שָׁלוֹם עוֹלָם', 'नमस्ते दुनिया। आप कैसे हैं?',
  'สวัสดีชาวโลก ขอบคุณครับ', '你好，世界。今天天气很好！', '안녕하세요 세계, 반갑습니다.', 'こんにちは世界、元気ですか？', 'Tiếng Việt có dấu: Người, được, ở đâu?',
  'Ærøskøbing på Ærø; Straße, Öl, übermäßig.', 'ǅemal, ǈubica, ǋegoš (title case)', 'İstanbul ıstakoz', 'ﬁnance ﬂow ﬀ (ligatures)',
  'e\u0301te\u0301 vs été', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇', 'ﾊﾝｶｸ ｶﾀｶﾅ and ＦＵＬＬＷＩＤＴＨ １２３', 'ᚠᛇᚻ᛫ᛒᛦᚦ᛫ᚠᚱᚩᚠᚢᚱ', 'ⲁⲛⲟⲕ Coptic', '𐐷𐐸 Deseret',
];

const EMOJI_ZWJ = [
  '👨‍👩‍👧‍👦', '👩‍💻', '🧑‍🤝‍🧑', '🏳️‍🌈', '🏴‍☠️', '👁️‍🗨️', '🐻‍❄️', '❤️‍🔥', '👩🏽‍🚀', '🧔🏿‍♂️', '👨‍❤️‍💋‍👨', '🫱🏼‍🫲🏿',
];
const FLAG_TAGS = ['🏴󠁧󠁢󠁥󠁮󠁧󠁿', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '🏴󠁧󠁢󠁷󠁬󠁳󠁿'];

const SPACES = [' ', '  ', '\t', '\n', '\r\n', '\n\n', '\u00a0', '\u3000', '\u2003', '\u2009', '\u200a', '\u1680', '\u2028',
  '\u2029', '\u202f', '\u205f', '\ufeff', '\u000b', '\u000c', '\r', '\u0085', '\u180e', '\u200b', '\u2060', ' \u00a0', '\u00a0 '];

function word(rng) {
  let w = rng.pick(WORDS);
  if (rng.chance(0.08)) w = w[0].toUpperCase() + w.slice(1);
  if (rng.chance(0.02)) w = w.toUpperCase();
  return w;
}

function prose(rng) {
  const sentences = [];
  for (let s = rng.int(2, 8); s > 0; s--) {
    const words = [];
    for (let n = rng.int(3, 18); n > 0; n--) {
      let w = rng.chance(0.1) ? rng.pick(CONTRACTIONS) : word(rng);
      if (rng.chance(0.04)) w = String(rng.int(0, 100000));
      if (rng.chance(0.08)) w += rng.pick([',', ';', ':', ' -', ' —', '...']);
      if (rng.chance(0.03)) w = rng.pick(['"', '(', '“', '«', '\'']) + w + rng.pick(['"', ')', '”', '»', '\'']);
      words.push(w);
    }
    let s2 = words.join(' ');
    s2 = s2[0].toUpperCase() + s2.slice(1) + rng.pick(['.', '.', '.', '!', '?', '?!', '...', '…']);
    sentences.push(s2);
  }
  return sentences.join(rng.pick([' ', ' ', '  ', '\n'])) + rng.pick(['\n', '\n\n', ' ', '\r\n']);
}

function contractions(rng) {
  return repeat(rng.int(10, 40), () => {
    const c = rng.pick(CONTRACTIONS);
    return rng.pick(['', ' ', '  ', '\n', '"', '(']) + (rng.chance(0.3) ? word(rng) : '') + c + rng.pick(['', ' ', '.', ',', '\n', '!']);
  });
}

function scriptWord(rng, sc) {
  let w = '';
  for (let n = rng.int(1, sc.nospace ? 30 : 10); n > 0; n--) {
    const [lo, hi] = rng.pick(sc.letters);
    w += fromRange(rng, lo, hi);
    if (sc.marks && rng.chance(0.35)) {
      const [mlo, mhi] = rng.pick(sc.marks);
      w += fromRange(rng, mlo, mhi);
      if (rng.chance(0.15)) w += fromRange(rng, mlo, mhi);
    }
  }
  if (sc.digits && rng.chance(0.1)) w += ' ' + repeat(rng.int(1, 6), () => fromRange(rng, sc.digits[0], sc.digits[1]));
  return w;
}

function scripts(rng) {
  const sc = rng.pick(SCRIPTS);
  let out = rng.chance(0.3) ? rng.pick(PHRASES) + ' ' : '';
  for (let n = rng.int(10, 60); n > 0; n--) {
    out += scriptWord(rng, sc);
    out += sc.nospace && rng.chance(0.6) ? rng.pick(['', '、', '。', '，', '！', '？']) : rng.pick([' ', ' ', ' ', ', ', '. ', '\n', '؟ ', '। ', ' — ']);
  }
  return out + '\n';
}

function emojiOne(rng) {
  switch (rng.int(0, 7)) {
    case 0: return fromRange(rng, 0x1f600, 0x1f64f);
    case 1: return fromRange(rng, 0x1f300, 0x1f5ff) + (rng.chance(0.3) ? '\ufe0f' : '');
    case 2: return rng.pick(EMOJI_ZWJ);
    case 3: return rng.pick(['👍', '👋', '🙏', '💪', '🤌', '👶', '🧑']) + fromRange(rng, 0x1f3fb, 0x1f3ff); // skin tones
    case 4: return fromRange(rng, 0x1f1e6, 0x1f1ff) + fromRange(rng, 0x1f1e6, 0x1f1ff); // regional-indicator flags
    case 5: return rng.pick(['0', '1', '7', '#', '*']) + '\ufe0f\u20e3'; // keycaps
    case 6: return rng.pick(FLAG_TAGS);
    default: return rng.pick(['❤️', '☀️', '✔️', '⚠️', '♻️', '✨', '⭐', '☕', '⌚']) + (rng.chance(0.2) ? '\ufe0e' : '');
  }
}

function emoji(rng) {
  return repeat(rng.int(10, 50), () => {
    const e = repeat(rng.int(1, 4), () => emojiOne(rng));
    return rng.chance(0.5) ? rng.pick([' ', '', '\n', '  ']) + e + rng.pick(['', ' ', '!']) + (rng.chance(0.4) ? word(rng) : '') : e;
  });
}

function combining(rng) {
  return repeat(rng.int(10, 40), () => {
    let w = '';
    for (let n = rng.int(1, 8); n > 0; n--) {
      w += rng.chance(0.8) ? fromRange(rng, 0x61, 0x7a) : rng.pick(['1', '2', '.', '-', ' ', 'é', 'ß']);
      for (let k = rng.chance(0.5) ? rng.int(1, rng.chance(0.1) ? 12 : 3) : 0; k > 0; k--)
        w += rng.pick([fromRange(rng, 0x0300, 0x036f), fromRange(rng, 0x1ab0, 0x1abe), fromRange(rng, 0x20d0, 0x20f0),
          fromRange(rng, 0xfe20, 0xfe2f), fromRange(rng, 0xfe00, 0xfe0f), '\u200d', '\u200c']);
    }
    return w + rng.pick([' ', ' ', '\n', ', ']);
  });
}

function whitespace(rng) {
  return repeat(rng.int(15, 60), () => {
    const ws = rng.chance(0.3) ? ' '.repeat(rng.int(1, 40)) : repeat(rng.int(1, 6), () => rng.pick(SPACES));
    const after = rng.pick([word(rng), String(rng.int(0, 999)), '!?', '(', emojiOne(rng), '', '\n', ' ', scriptWord(rng, rng.pick(SCRIPTS))]);
    const trailing = rng.chance(0.2) ? ' '.repeat(rng.int(1, 5)) + rng.pick(['\n', '\r\n', '\t\n']) : '';
    return ws + after + trailing;
  });
}

function numbers(rng) {
  return repeat(rng.int(15, 50), () => {
    let n;
    switch (rng.int(0, 11)) {
      case 0: n = repeat(rng.int(1, 40), () => String(rng.int(0, 9))); break;
      case 1: n = String(rng.int(0, 99999999)).replace(/\B(?=(\d{3})+$)/g, ','); break;
      case 2: n = (rng.float() * 10 ** rng.int(-5, 12)).toFixed(rng.int(0, 6)); break;
      case 3: n = '0x' + rng.u32().toString(16).toUpperCase(); break;
      case 4: n = `${rng.int(1990, 2030)}-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`; break;
      case 5: n = `+1 (${rng.int(200, 999)}) ${rng.int(200, 999)}-${rng.int(1000, 9999)}`; break;
      case 6: { const zero = rng.pick([0x0660, 0x06f0, 0x0966, 0xff10, 0x0e50, 0x09e6, 0x1d7ce]); n = repeat(rng.int(1, 8), () => cp(zero + rng.int(0, 9))); break; }
      case 7: n = rng.pick(['½', '¾', '²', '³', '¹', '⁴', '₅', 'Ⅻ', 'ⅷ', '①', '⑳', '𝟘', '𝟗', '〇', '〺', '𐌢', '٣', '৪', '௰', '万']); break;
      case 8: n = rng.int(1, 999) + rng.pick(['st', 'nd', 'rd', 'th', '%', 'px', 'km', 'x', 'e5', '.5', ',5', '₂']); break;
      case 9: n = `${rng.float().toExponential(rng.int(1, 8))}`; break;
      case 10: n = String(rng.int(0, 9)).repeat(rng.int(1, 12)); break;
      default: n = `v${rng.int(0, 20)}.${rng.int(0, 99)}.${rng.int(0, 999)}`; break;
    }
    return n + rng.pick([' ', ' ', ', ', '\n', '', ' + ', '×']);
  });
}

const CODE = [
  'int main(int argc, char** argv) {\n    return argc > 1 ? 0 : 1;\n}\n',
  'for (let i = 0; i < n; i++) {\n\tif (a[i] !== b[i]) return false;\n}\n',
  'def softmax(x, T=1.0):\n    e = np.exp((x - x.max()) / T)\n    return e / e.sum()\n\n',
  'x >>= 2; y <<= 3; z ^= ~w & 0xFF; p->next = q; ns::f(); a ?? b; c?.d; e **= 2;\n',
  '#include <vector>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n// comment with trailing spaces   \n',
  'const re = /\\s+(?!\\S)/gu; const s = `template ${x} literal`;\n',
  "SELECT name, COUNT(*) FROM users WHERE email LIKE '%@example.com' GROUP BY name;\n",
  '<div class="a-b" data-x=\'1\'>&nbsp;&amp;&lt;tag&gt;</div>\n',
  '{"key": [1, 2.5, -3e10, true, null], "nested": {"a": "b\\n"}}\n',
  'fn main() -> Result<(), Box<dyn Error>> { println!("{:?}", v); Ok(()) }\n',
  '    if x == 1:\n        pass  # TODO(someone): fix\n    elif y != 2 and not z:\n        raise ValueError("bad")\n',
  'echo "$HOME" | grep -E \'^[a-z]+$\' && cd ~/src || exit 1\n',
  '$ git log --oneline -n 5 && git diff HEAD~1..HEAD -- src/\n',
];

function code(rng) {
  let out = '';
  for (let n = rng.int(2, 8); n > 0; n--) {
    let c = rng.pick(CODE);
    if (rng.chance(0.3)) c = c.replace(/    /g, '\t');
    if (rng.chance(0.2)) c = c.replace(/\n/g, '\r\n');
    out += (rng.chance(0.3) ? '  '.repeat(rng.int(1, 6)) : '') + c;
    if (rng.chance(0.3)) out += '    '.repeat(rng.int(1, 4)) + word(rng) + '_' + word(rng) + ' = ' + rng.int(0, 9999) + ';\n';
  }
  return out;
}

function urls(rng) {
  return repeat(rng.int(5, 20), () => {
    const host = rng.pick(['example.com', 'www.example.org', 'sub.domain.co.uk', 'localhost:8080', '127.0.0.1', 'xn--bcher-kva.de', 'bücher.de']);
    const path = repeat(rng.int(0, 4), () => '/' + word(rng) + (rng.chance(0.3) ? rng.pick(['.html', '.png', '-2', '_x', '%20y']) : ''));
    const q = rng.chance(0.5) ? `?q=${word(rng)}&id=${rng.int(0, 99999)}&utf8=%E2%9C%93` : '';
    const frag = rng.chance(0.2) ? '#' + word(rng) : '';
    const forms = [
      `https://${host}${path}${q}${frag}`, `http://${host}/`, `ftp://${host}${path}`, `mailto:${word(rng)}.${word(rng)}@${host}`,
      `<https://${host}${path}>`, `[${word(rng)}](https://${host}${path})`, `C:\\Users\\${word(rng)}\\Documents\\file.txt`,
      `/usr/local/lib/${word(rng)}.so.${rng.int(1, 9)}`, `${word(rng)}@${host}`, `@${word(rng)}_${rng.int(0, 99)}`, `#${word(rng)}`,
    ];
    return rng.pick(forms) + rng.pick([' ', '\n', ', ', '. ', ')']);
  });
}

function punctuation(rng) {
  const P = ['!', '?', '.', ',', ';', ':', '-', '—', '–', '…', '"', "'", '“', '”', '‘', '’', '«', '»', '(', ')', '[', ']', '{', '}',
    '<', '>', '/', '\\', '|', '@', '#', '$', '%', '^', '&', '*', '_', '+', '=', '~', '`', '‽', '¿', '¡', '§', '¶', '†', '‡',
    '€', '£', '¥', '₹', '₿', '©', '®', '™', '°', '±', '×', '÷', '∑', '∫', '≈', '≠', '≤', '→', '⇒', '↔', '█', '░', '─', '│', '┼', '•'];
  return repeat(rng.int(20, 60), () => {
    const run = repeat(rng.int(1, rng.chance(0.1) ? 30 : 5), () => rng.chance(0.7) ? rng.pick(P) : cp(rng.pick([0x2010, 0x2190, 0x2200, 0x2500, 0x25a0, 0x2600, 0x3001]) + rng.int(0, 0x2f)));
    return rng.pick(['', ' ', '  ', '\n']) + run + (rng.chance(0.4) ? word(rng) : '');
  });
}

// Any Unicode scalar value: controls, private use, unassigned, noncharacters, astral planes.
function randomScalar(rng) {
  for (;;) {
    const r = rng.float();
    const c = r < 0.1 ? rng.int(0, 0x7f) : r < 0.2 ? rng.int(0x80, 0x7ff) : r < 0.75 ? rng.int(0x800, 0xffff) : rng.int(0x10000, 0x10ffff);
    if (c < 0xd800 || c > 0xdfff) return cp(c);
  }
}

function randomCodePoints(rng) {
  return repeat(rng.int(20, 80), () => repeat(rng.int(1, 6), () => randomScalar(rng)) + rng.pick(['', ' ', ' ', '\n', ' a', '1']));
}

function longRuns(rng) {
  const unit = rng.pick([' ', 'a', 'ab', '!', '0', '12', '\n', '\t', '-', '=', '.', 'é', '中', '😀', ' a', '\u00a0', '\u3000', 'la', 'ha']);
  const n = rng.int(50, rng.chance(0.3) ? 2000 : 400);
  return rng.pick(['', 'x', ' ', '\n']) + unit.repeat(Math.ceil(n / unit.length)) + rng.pick(['', 'x', ' ', '\n', '!', ' y']);
}

function endOfText(rng) {
  const forms = ['<|endoftext|>', '<|endoftext|>', ' <|endoftext|> ', '\n<|endoftext|>\n', '<|endoftext|><|endoftext|>', '<|endoftext',
    'endoftext|>', '<|endoftext|>>', '<<|endoftext|>', '<|EndOfText|>', '<| endoftext |>', '<|endoftext|>The', "<|endoftext|>'s",
    '<|endofprompt|>', '<|fim_prefix|>', '<|endoftext|>😀', 'x<|endoftext|>1'];
  return repeat(rng.int(3, 10), () => prose(rng).slice(0, rng.int(0, 200)) + rng.pick(forms));
}

// Word-level mix of everything: the unusual neighbours (a mark after a digit, an apostrophe
// after an emoji, NBSP before a letter) that sections of one kind never produce.
function mixed(rng) {
  const parts = [
    () => word(rng), () => rng.pick(CONTRACTIONS), () => scriptWord(rng, rng.pick(SCRIPTS)), () => emojiOne(rng),
    () => String(rng.int(0, 99999)), () => rng.pick(SPACES), () => randomScalar(rng), () => fromRange(rng, 0x0300, 0x036f),
    () => rng.pick(['!', '.', "'", '’', '-', '...', '"', '(', ')']), () => ' ', () => ' ', () => rng.pick(PHRASES),
  ];
  return repeat(rng.int(30, 120), () => rng.pick(parts)()) + '\n';
}

const SECTIONS = [
  [prose, 8], [contractions, 2], [scripts, 6], [emoji, 2], [combining, 2], [whitespace, 3], [numbers, 3], [code, 3],
  [urls, 2], [punctuation, 2], [randomCodePoints, 2], [longRuns, 1], [endOfText, 1], [mixed, 4],
];

export function makeCorpus({ seed = 1, bytes = 1_200_000 } = {}) {
  const rng = makeRng(seed);
  const total = SECTIONS.reduce((s, [, w]) => s + w, 0);
  const parts = [];
  let size = 0;
  while (size < bytes) {
    let r = rng.int(0, total - 1);
    let section = SECTIONS[0][0];
    for (const [f, w] of SECTIONS) {
      if (r < w) { section = f; break; }
      r -= w;
    }
    const text = section(rng);
    parts.push(text);
    size += Buffer.byteLength(text, 'utf8');
  }
  return parts.join('');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  if (!out) {
    console.error('usage: node make_corpus.mjs OUT.txt [--seed N] [--bytes N]');
    process.exit(2);
  }
  const text = makeCorpus({ seed: opt('--seed', 1), bytes: opt('--bytes', 1_200_000) });
  writeFileSync(out, text, 'utf8');
  console.log(`wrote ${Buffer.byteLength(text, 'utf8')} bytes, ${[...text].length} code points to ${out}`);
}
