// A Node module-resolution hook for packages whose ESM build imports
// directories ('./utils') and files without their extension ('./lib'),
// as bundlers allow and Node does not: such a specifier is retried as
// `<specifier>.js`, then `<specifier>/index.js`. Everything else resolves
// as Node resolves it. Registered by sealed-interop.mjs.
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const relative = specifier.startsWith("./") || specifier.startsWith("../") || specifier === ".";
    if (!relative || !["ERR_MODULE_NOT_FOUND", "ERR_UNSUPPORTED_DIR_IMPORT"].includes(err.code)) {
      throw err;
    }
    for (const candidate of [`${specifier}.js`, `${specifier}/index.js`]) {
      try {
        return await next(candidate, context);
      } catch {
        // the next candidate
      }
    }
    throw err;
  }
}
