const { resourceUsage } = process;
function m(label, fn) { const f0 = resourceUsage().minorPageFault; const t = performance.now(); fn(); const ms = performance.now() - t; const f = resourceUsage().minorPageFault - f0; console.log(label, ms.toFixed(1), 'ms', f, 'faults', (ms * 1000 / f).toFixed(2), 'us/fault'); }
m('64MB fresh buffer touch', () => { const b = Buffer.allocUnsafeSlow(64 << 20); for (let i = 0; i < b.length; i += 4096) b[i] = 1; });
m('js objects 2M', () => { const a = []; for (let i = 0; i < 2e6; i++) a.push({ x: i, y: 'a' + i }); globalThis.keep = a; });
m('json parse 20MB', () => { const s = JSON.stringify(Array.from({ length: 5e5 }, (_, i) => ['run-' + i, i, i * 2, 'abcdefghijklmnopqrstuvwxyz0123456789abcdefgh'])); globalThis.k2 = JSON.parse(s); });
