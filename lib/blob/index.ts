export { BlobConflictError, type BlobKind, type BlobStore } from './port';
export { BlobStoreError } from './errors';
export { FileBlobStore, type FileBlobStoreOptions } from './file-blob-store';
export { S3BlobStore, DAH_TAG, type S3BlobStoreOptions } from './s3-blob-store';
export { createBlobStore, type CreateBlobStoreOptions } from './create';
