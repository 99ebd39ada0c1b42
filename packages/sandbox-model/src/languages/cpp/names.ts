/** The C++ names of a project: namespace, record type, field, header file. */
export interface CppNames { ns: string; E: string; f: string; header: string }
