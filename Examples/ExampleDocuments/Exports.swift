// `import ExampleDocuments` is enough to use the documents and the whole CloudDocuments API.
@_exported import CloudDocuments
