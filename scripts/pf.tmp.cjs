for (let r = 0; r < 4; r++) {
  const n = 64 << 20;
  let t = performance.now();
  const b = Buffer.allocUnsafeSlow(n);
  for (let i = 0; i < n; i += 4096) b[i] = 1;
  const ms = performance.now() - t;
  console.log('touch 64MB fresh:', ms.toFixed(1), 'ms =', (ms * 1000 / (n / 4096)).toFixed(2), 'us/page');
}
