// The types of validators.generated.js, which `npm run build` writes into dist/src/config
// (src/config/write-validators.ts): the configuration schema compiled by Ajv at build time.
import type { ValidateFunction } from 'ajv';

export declare const config: ValidateFunction;
export declare const sagaFile: ValidateFunction;
export declare const eventMetaFields: readonly string[];
