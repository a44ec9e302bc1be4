// Syntax highlighting for fenced code: highlight.js's core with a fixed set of
// common languages, run by marked through marked-highlight. Its output is
// markup (spans with hljs-* classes) that still goes through DOMPurify with
// the rest of the message (render.ts). A block without a known language is
// left plain: guessing the language (highlightAuto) would run every grammar on
// every streamed prefix.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { markedHighlight } from 'marked-highlight';

const languages = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });

/** highlightExtension is the marked extension that highlights fenced code with a known language. */
export const highlightExtension = markedHighlight({
  emptyLangClass: 'hljs',
  langPrefix: 'hljs language-',
  highlight(code, lang) {
    const name = lang.split(/\s/)[0]?.toLowerCase() ?? '';
    if (!name || !hljs.getLanguage(name)) return code;
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  },
});
