const mods = process.argv.slice(2);
let t = performance.now();
const start = t;
for (const m of mods) {
  await import(m);
  const n = performance.now();
  console.log(m, (n - t).toFixed(1));
  t = n;
}
console.log("total", (t - start).toFixed(1));
