const f = () => process.resourceUsage().minorPageFault;
const marks = [['start', f(), performance.now()]];
const { loadBundle, processSink } = require('../bin/convsearch.js');
const bundle = loadBundle();
marks.push(['bundle loaded', f(), performance.now()]);
bundle.main(['node', 'convsearch', ...process.argv.slice(2)], { ...processSink(() => {}), stdout: { write() {}, isTTY: false } }).then((s) => {
  marks.push(['main done', f(), performance.now()]);
  let [, pf, pt] = marks[0];
  for (const [l, x, t] of marks) { console.error(l.padEnd(16), String(x - pf).padStart(6), 'faults', (t - pt).toFixed(1).padStart(7), 'ms'); pf = x; pt = t; }
});
