@_exported import FileCoordination
