"""JUnit XML checked against the rules of the two schemas CI tools apply,
written from their published definitions (nothing is fetched at test time):

  xunit   the Jenkins xunit plugin's junit-10.xsd
          (jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/plugins/
          xunit/types/model/xsd/junit-10.xsd), which the plugin validates every
          input file against and drops or stops on a file that fails;
  ant     Apache Ant's JUnit report schema as published by Windy Road
          (windyroad/JUnit-Schema, JUnit.xsd), the strictest common one.

Each element's rule gives its allowed and required attributes with their
types, whether it may hold text, and its children as a regular expression
over the child tag names (each followed by ','): an XSD choice or sequence
of element references is exactly such an expression.
"""
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

# junit-10.xsd's SUREFIRE_TIME: digits with optional thousands commas and
# an optional fraction.
_SUREFIRE_TIME = re.compile(r'(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?')
_INT = re.compile(r'[+-]?[0-9]+')
_DECIMAL = re.compile(r'[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)')
# Ant's ISO8601_DATETIME_PATTERN: no time zone.
_DATETIME = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}')


def _string(_value):
    return True


def _token_nonempty(value):
    return bool(value.strip())


def _matches(pattern):
    return lambda value: pattern.fullmatch(value) is not None


TYPES = {
    'string': _string,
    'surefire-time': _matches(_SUREFIRE_TIME),
    'int': _matches(_INT),
    'decimal': _matches(_DECIMAL),
    'datetime': _matches(_DATETIME),
    'token1': _token_nonempty,
}


@dataclass
class Rule:
    attrs: dict = field(default_factory=dict)     # name -> type
    required: tuple = ()
    children: str = ''                            # regex over "tag," sequence
    text: bool = False                            # mixed / simple content allowed
    any_content: bool = False                     # untyped element: anything goes


def _choice(*tags):
    return '(?:%s)*' % '|'.join('%s,' % t for t in tags)


_FAILURE_LIKE = Rule(attrs={'type': 'string', 'message': 'string'}, text=True)
_RERUN = Rule(attrs={'type': 'string', 'message': 'string'}, required=('type',), text=True,
              children='(?:stackTrace,)?(?:system-out,)?(?:system-err,)?')

XUNIT = {
    'testsuites': Rule(attrs={'name': 'string', 'time': 'surefire-time', 'tests': 'string',
                              'failures': 'string', 'errors': 'string'},
                       children='(?:testsuite,)*'),
    'testsuite': Rule(attrs={'name': 'string', 'tests': 'string', 'failures': 'string',
                             'errors': 'string', 'group': 'string', 'time': 'surefire-time',
                             'skipped': 'string', 'timestamp': 'string', 'hostname': 'string',
                             'id': 'string', 'package': 'string', 'file': 'string', 'log': 'string',
                             'url': 'string'},
                      required=('name', 'tests', 'failures', 'errors'),
                      children=_choice('testsuite', 'properties', 'testcase', 'system-out', 'system-err')),
    'properties': Rule(children='(?:property,)*'),
    'property': Rule(attrs={'name': 'string', 'value': 'string'}, required=('name', 'value')),
    'testcase': Rule(attrs={'name': 'string', 'time': 'string', 'classname': 'string', 'group': 'string'},
                     required=('name',),
                     children=_choice('skipped', 'error', 'failure', 'rerunFailure', 'rerunError',
                                      'flakyFailure', 'flakyError', 'system-out', 'system-err')),
    'failure': _FAILURE_LIKE,
    'error': _FAILURE_LIKE,
    'skipped': _FAILURE_LIKE,
    'system-out': Rule(text=True),
    'system-err': Rule(text=True),
    'rerunFailure': _RERUN, 'rerunError': _RERUN, 'flakyFailure': _RERUN, 'flakyError': _RERUN,
    'stackTrace': Rule(text=True),
}
XUNIT_ROOTS = ('testsuites', 'testsuite')

_ANT_SUITE_ATTRS = {'name': 'token1', 'timestamp': 'datetime', 'hostname': 'token1', 'tests': 'int',
                    'failures': 'int', 'errors': 'int', 'skipped': 'int', 'time': 'decimal'}
_ANT_SUITE_REQUIRED = ('name', 'timestamp', 'hostname', 'tests', 'failures', 'errors', 'time')
_ANT_SUITE_CHILDREN = 'properties,(?:testcase,)*system-out,system-err,'
ANT = {
    'testsuites': Rule(children='(?:testsuite,)*'),
    # Inside <testsuites> a suite also needs package and id (aggregated form).
    'testsuites/testsuite': Rule(attrs=dict(_ANT_SUITE_ATTRS, package='token1', id='int'),
                                 required=_ANT_SUITE_REQUIRED + ('package', 'id'),
                                 children=_ANT_SUITE_CHILDREN),
    'testsuite': Rule(attrs=_ANT_SUITE_ATTRS, required=_ANT_SUITE_REQUIRED, children=_ANT_SUITE_CHILDREN),
    'properties': Rule(children='(?:property,)*'),
    'property': Rule(attrs={'name': 'token1', 'value': 'string'}, required=('name', 'value')),
    'testcase': Rule(attrs={'name': 'token1', 'classname': 'token1', 'time': 'decimal'},
                     required=('name', 'classname', 'time'),
                     children='(?:skipped,|error,|failure,)?'),
    'skipped': Rule(any_content=True),
    'error': Rule(attrs={'message': 'string', 'type': 'string'}, required=('type',), text=True),
    'failure': Rule(attrs={'message': 'string', 'type': 'string'}, required=('type',), text=True),
    'system-out': Rule(text=True),
    'system-err': Rule(text=True),
}
ANT_ROOTS = ('testsuites', 'testsuite')

SCHEMAS = {'xunit': (XUNIT, XUNIT_ROOTS), 'ant': (ANT, ANT_ROOTS)}


def _check(el, path, rules, errors):
    rule = rules.get('%s/%s' % (path.rsplit('/', 1)[-1], el.tag)) if path else None
    rule = rule or rules.get(el.tag)
    here = '%s/%s' % (path, el.tag) if path else el.tag
    if rule is None:
        errors.append('%s: element not allowed' % here)
        return
    if rule.any_content:
        return
    for name, value in el.attrib.items():
        kind = rule.attrs.get(name)
        if kind is None:
            errors.append('%s: attribute %r not allowed' % (here, name))
        elif not TYPES[kind](value):
            errors.append('%s: attribute %s=%r is not a valid %s' % (here, name, value, kind))
    for name in rule.required:
        if name not in el.attrib:
            errors.append('%s: attribute %r missing' % (here, name))
    sequence = ''.join('%s,' % child.tag for child in el)
    if not re.fullmatch(rule.children, sequence):
        errors.append('%s: children %s do not fit %s' % (here, sequence.rstrip(',') or '(none)',
                                                         rule.children or '(none)'))
    if not rule.text:
        texts = [el.text] + [child.tail for child in el]
        if any(t and t.strip() for t in texts):
            errors.append('%s: text is not allowed here' % here)
    for child in el:
        _check(child, here, rules, errors)


def validate(xml_text, schema='xunit'):
    """Every way the document breaks the named schema's rules; [] when valid."""
    rules, roots = SCHEMAS[schema]
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        return ['not XML: %s' % e]
    if root.tag not in roots:
        return ['root element %s is not one of %s' % (root.tag, ', '.join(roots))]
    errors = []
    _check(root, '', rules, errors)
    return errors
