// Records the JS-visible shape of each handler's arguments; golden_test.go compares the
// output with testdata/*.golden.
function shape(ctx) {
  const c = {};
  for (const k in ctx) if (typeof ctx[k] !== "function") c[k] = ctx[k];
  return c;
}

function record(event, args) {
  globalThis.out = JSON.stringify({ event, ...args }, null, 2) + "\n";
}

export default {
  onAdd(obj, ctx) {
    record("add", { obj, ctx: shape(ctx) });
  },
  onUpdate(oldObj, newObj, ctx) {
    record("update", { oldObj, newObj, diff: util.diff(oldObj, newObj), ctx: shape(ctx) });
  },
  onDelete(obj, ctx) {
    record("delete", { obj, ctx: shape(ctx) });
  },
};
