/** Replaced at build time with package.json's version (see scripts/build.mjs). */
declare const __PROXY_VERSION__: string | undefined;
export const VERSION: string = typeof __PROXY_VERSION__ === 'string' ? __PROXY_VERSION__ : '0.0.0-dev';
