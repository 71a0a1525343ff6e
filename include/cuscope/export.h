/* Symbol visibility of cuscope's public API (C89 and C++). */
#ifndef CUSCOPE_EXPORT_H_
#define CUSCOPE_EXPORT_H_

#define CUSCOPE_EXPORT __attribute__((visibility("default")))

#endif /* CUSCOPE_EXPORT_H_ */
