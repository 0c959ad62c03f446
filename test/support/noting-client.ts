import type { StoreCommand } from '../../lambda/store/dynamodb/commands';
import type { DocumentClient } from '../../lambda/store/dynamodb/document-client';

/** The real document client, with the operation of each command it sends noted in `sent`. */
export function notingClient(doc: DocumentClient, sent: string[]): DocumentClient {
  return {
    send: ((command: StoreCommand) => {
      sent.push(command.operation);
      return doc.send(command as never);
    }) as DocumentClient['send'],
  };
}
