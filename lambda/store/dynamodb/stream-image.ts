import { unmarshall } from '@aws-sdk/util-dynamodb';

type AttributeMap = Parameters<typeof unmarshall>[0];

/**
 * A stream record's image as a plain object. Binaries stay as the record carries them (base64
 * text in a Lambda event, bytes from the Streams API), as util-dynamodb reads them.
 */
export const itemFromImage = (item: unknown): Record<string, unknown> => unmarshall(item as AttributeMap);
